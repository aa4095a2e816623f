-- wrk script shared by bench/tracking-get.sh and bench/cluster.sh: GETs of the paths in the file named by
-- $REQUESTS (one "PATH<TAB>TOKEN" line each), in a scattered order, each with its bearer token. Built in init(), once
-- wrk has set the Host header.
local reqs = {}
local n = 0
init = function(args)
  local file = os.getenv("REQUESTS") or error("REQUESTS must name the file of paths and tokens")
  for line in io.lines(file) do
    local path, token = line:match("([^\t]+)\t([^\t]+)")
    reqs[#reqs + 1] = wrk.format("GET", path, { ["Authorization"] = "Bearer " .. token })
  end
end
request = function()
  n = n + 1
  return reqs[(n * 7919) % #reqs + 1]
end
