-- wrk script: PUT a small document under a fresh ID per request (per thread
-- counter), to the path given by the PUT_PATH env var (suffix such as ?commit).
local counter = 0
local suffix = os.getenv("PUT_SUFFIX") or ""
local prefix = os.getenv("PUT_PREFIX") or "/bench/"
local body = '{"package":"0ad","version":"0.0.26-3","section":"games","installed_size":28591,"summary":"Real-time strategy game of ancient warfare"}'
wrk.method = "PUT"
wrk.headers["Content-Type"] = "application/json"
wrk.body = body
request = function()
  counter = counter + 1
  return wrk.format(nil, prefix .. "d" .. counter .. suffix)
end
