// What the browser tests call: protobuf-ts's gRPC-Web transport (fetch) with a StringValue
// message and a test service described by hand, as protobuf-ts's generated code describes
// them. Bundled by build.mjs into dist/client.js, which sets `window.grpcWebClient`.
import { GrpcWebFetchTransport } from "@protobuf-ts/grpcweb-transport";
import { MessageType, ScalarType } from "@protobuf-ts/runtime";
import { RpcError, ServiceType } from "@protobuf-ts/runtime-rpc";

const StringValue = new MessageType("google.protobuf.StringValue", [
  { no: 1, name: "value", kind: "scalar", T: ScalarType.STRING },
]);

const Browser = new ServiceType("test.Browser", [
  { name: "Hello", options: {}, I: StringValue, O: StringValue },
  { name: "Countdown", serverStreaming: true, options: {}, I: StringValue, O: StringValue },
  { name: "Refuse", options: {}, I: StringValue, O: StringValue },
  { name: "Echo", options: {}, I: StringValue, O: StringValue },
]);

const methodNamed = (name) => Browser.methods.find((m) => m.name === name);

// Runs one call; returns what a test asserts on, errors included (never throws).
async function call({ baseUrl, format, method, value, meta, timeout }) {
  const transport = new GrpcWebFetchTransport({ baseUrl, format });
  // `meta`: the request metadata as JSON text (an object of names and values).
  const options = transport.mergeOptions({ meta: meta ? JSON.parse(meta) : {}, timeout });
  const info = methodNamed(method);
  const seen = { messages: [], times: [] };
  const started = performance.now();
  try {
    if (info.serverStreaming) {
      const c = transport.serverStreaming(info, { value }, options);
      for await (const message of c.responses) {
        seen.messages.push(message.value);
        seen.times.push(Math.round(performance.now() - started));
      }
      seen.status = await c.status;
      seen.headers = await c.headers;
      seen.trailers = await c.trailers;
    } else {
      const c = transport.unary(info, { value }, options);
      seen.messages.push((await c.response).value);
      seen.status = await c.status;
      seen.headers = await c.headers;
      seen.trailers = await c.trailers;
    }
  } catch (e) {
    if (e instanceof RpcError) seen.error = { code: e.code, message: e.message, meta: e.meta };
    else seen.error = { code: "THROWN", message: String(e) };
  }
  return JSON.stringify(seen);
}

window.grpcWebClient = { call };
