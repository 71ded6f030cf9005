-- Prints wrk's exact counts and latency percentiles (microseconds) as one JSON line,
-- read by tests/faults/lib/common.py; wrk's own rounded summary is not parsed.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%.0f,"duration_us":%.0f,"bytes":%.0f,"connect":%.0f,"read":%.0f,' ..
    '"write":%.0f,"status":%.0f,"timeout":%.0f,"p50_us":%.0f,"p90_us":%.0f,"p99_us":%.0f,' ..
    '"max_us":%.0f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
