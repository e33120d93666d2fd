-- Sends requests whose paths (with query strings) are read from a file, one per line; prints a
-- JSON line with throughput, latency percentiles and error counts when done.
-- BENCH_METHOD: GET or POST. BENCH_ORDER: "random" (default) picks any line each time;
-- "sequential" gives each thread its own lines in turn, so no line is sent twice (for requests
-- that may succeed only once, such as redeeming a key).
local paths = {}
local method = os.getenv("BENCH_METHOD") or "GET"
local sequential = os.getenv("BENCH_ORDER") == "sequential"
local threads = tonumber(os.getenv("BENCH_THREADS") or "1")
local next_thread = 0
local sent = 0

function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  local file = assert(io.open(args[1], "r"))
  for line in file:lines() do
    paths[#paths + 1] = line
  end
  file:close()
  math.randomseed(os.time() + math.floor(os.clock() * 1000000) + (tid or 0))
end

function request()
  local path
  if sequential then
    local index = (tid or 0) + 1 + sent * threads
    sent = sent + 1
    path = paths[((index - 1) % #paths) + 1]
  else
    path = paths[math.random(#paths)]
  end
  return wrk.format(method, path, { ["Content-Length"] = "0" }, "")
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"errors_connect":%d,"errors_read":%d,'
      .. '"errors_write":%d,"errors_status":%d,"errors_timeout":%d,'
      .. '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
