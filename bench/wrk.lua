-- Sends requests whose paths (with query strings) are read from a file, one per line, picked at
-- random; prints a JSON line with throughput, latency percentiles and error counts when done.
local paths = {}
local method = os.getenv("BENCH_METHOD") or "GET"

function init(args)
  local file = assert(io.open(args[1], "r"))
  for line in file:lines() do
    paths[#paths + 1] = line
  end
  file:close()
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
end

function request()
  local path = paths[math.random(#paths)]
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
