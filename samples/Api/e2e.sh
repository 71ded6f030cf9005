#!/usr/bin/env bash
# End-to-end checks of samples/Api against one build of it, started by this script: the same
# checks for the JIT build and the native AOT executable.
#
#   dotnet build -c Release samples/Api
#   samples/Api/e2e.sh dotnet samples/Api/bin/Release/net10.0/Api.dll
#   dotnet publish -c Release samples/Api
#   samples/Api/e2e.sh samples/Api/bin/Release/net10.0/linux-x64/publish/Api
#
# Also prints the time from start to the first answer and the resident memory (RSS) when idle,
# after start and after the checks. PORT (default 18090) sets the port; OPENAPI_OUT saves the
# served /openapi.json (to compare two builds' documents with diff). Exit code 1 if a check fails.
set -u

port=${PORT:-18090}
base="http://127.0.0.1:$port"
log=$(mktemp)
failures=0

start=$(date +%s%N)
"$@" --port "$port" >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT

# The first answer: a bare GET over bash's /dev/tcp, tried every millisecond (no process per try).
first=""
for _ in $(seq 1 5000); do
    if { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
        printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' >&3
        if head -c 12 <&3 | grep -q "HTTP/1.1 200"; then first=$(date +%s%N); exec 3>&-; break; fi
        exec 3>&-
    fi
    kill -0 $pid 2>/dev/null || { echo "the server exited:"; cat "$log"; exit 1; }
    sleep 0.001
done
[ -n "$first" ] || { echo "no answer in 5 s"; cat "$log"; exit 1; }

rss() { awk '/VmRSS/ { printf "%.1f MiB", $2 / 1024 }' "/proc/$pid/status"; }
sleep 1
rss_start=$(rss)

# check NAME METHOD PATH STATUS TEXT [BODY]: the status, and TEXT somewhere in headers or body.
check() {
    local name=$1 method=$2 path=$3 status=$4 text=$5 body=${6:-}
    local out
    if [ -n "$body" ]; then
        out=$(curl -s -i -X "$method" -H 'Content-Type: application/json' --data-binary "$body" "$base$path")
    else
        out=$(curl -s -i -X "$method" "$base$path")
    fi
    local got
    got=$(printf '%s' "$out" | head -1 | awk '{ print $2 }')
    if [ "$got" = "$status" ] && printf '%s' "$out" | grep -qF -- "$text"; then
        echo "ok    $name"
    else
        echo "FAIL  $name: expected $status and '$text', got:"
        printf '%s\n' "$out" | head -20 | sed 's/^/      /'
        failures=$((failures + 1))
    fi
}

check "an empty user list" GET /users 200 '[]'
check "a user created" POST /users 201 'Location: /users/1' '{"name":" Ada ","email":"ada@example.com"}'
check "the user read back" GET /users/1 200 '{"id":1,"name":"Ada","email":"ada@example.com"}'
check "the user in the list" GET '/users?limit=10' 200 '[{"id":1,"name":"Ada","email":"ada@example.com"}]'
check "the query bound to a record" GET '/users/search?name=AD' 200 '[{"id":1,"name":"Ada","email":"ada@example.com"}]'
check "a bound query value that is not a number" GET '/users/search?limit=x' 400 '"errors":{"Limit":["must be an integer"]}'
check "a typed query value that is not a number" GET '/users?limit=x' 400 "query parameter 'limit' must be an integer"
check "an unknown user, as problem+json" GET /users/999 404 'application/problem+json'
check "a missing field, named" POST /users 400 '"errors":{"email":["is required"]}' '{"name":"A"}'
check "a null where F# has none" POST /users 400 "'name' must not be null" '{"name":null,"email":"a@b"}'
check "a field of the wrong type" POST /users 400 "'name' must be a string" '{"name":1,"email":"a@b"}'
check "broken JSON" POST /users 400 'the body is not well-formed JSON' '{"name":'
check "a validation failure, 422" POST /users 422 '"email":["must contain an @"]' '{"name":"A","email":"x"}'
check "an update" PUT /users/1 200 '"email":"ada@example.org"' '{"name":"Ada","email":"ada@example.org"}'
check "a delete" DELETE /users/1 204 ''
check "routef with two values" GET /r/42/items/abc 200 'item 42 abc'
check "routef with two integers" GET /r/7/users/9 200 'user 7 9'
check "routef: a value that does not parse is no match" GET /r/x/items/abc 404 ''
check "a literal route among 100" GET /r/99 200 'r99'
check "routef with a string" GET /hello/Swoop 200 'Hello, Swoop!'
check "a record as JSON" GET /json 200 '{"message":"Hello, World!"}'
check "another record as JSON" GET /time 200 '{"now":"'
check "405 with Allow" DELETE /time 405 'Allow: GET, HEAD'
check "the OpenAPI document" GET /openapi.json 200 '"openapi": "3.1.0"'
check "the OpenAPI schemas from the contracts" GET /openapi.json 200 '"required": ['

if [ -n "${OPENAPI_OUT:-}" ]; then curl -s "$base/openapi.json" >"$OPENAPI_OUT"; fi

sleep 1
echo "first answer $(( (first - start) / 1000000 )) ms after start; idle RSS $rss_start after start, $(rss) after the checks"
if [ "$failures" -gt 0 ]; then echo "$failures check(s) failed"; exit 1; fi
echo "all checks passed"
