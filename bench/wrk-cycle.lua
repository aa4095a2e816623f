-- wrk script: cycles the URLs of the file named by the first argument, each thread from its own offset.
local paths, index = {}, 0
function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  index = math.random(#paths)
end
function request()
  index = index % #paths + 1
  return wrk.format("GET", paths[index])
end
