-- wrk script: POSTs the JSON-RPC body read from $BENCH_BODY_FILE on every request and
-- counts responses carrying a JSON-RPC "error" (wrk alone only sees HTTP status codes).
-- done() prints one machine-readable BENCH_RESULT line that bench/run.sh parses.
local f = assert(io.open(os.getenv("BENCH_BODY_FILE"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) rpc_errors = 0 end
function response(status, headers, body)
  if body and string.find(body, '"error"', 1, true) then rpc_errors = rpc_errors + 1 end
end
function done(summary, latency, requests)
  local errs = 0
  for _, t in ipairs(threads) do errs = errs + (t:get("rpc_errors") or 0) end
  local e = summary.errors
  io.write(string.format(
    "BENCH_RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d mean_us=%.0f rpc_errors=%d non2xx=%d socket_errors=%d timeouts=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.mean,
    errs, e.status, e.connect + e.read + e.write, e.timeout))
end
