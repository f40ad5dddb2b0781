-- io is here, but reaches only the job's folders (/input, /output, /work); what would reach
-- further is not: processes (io.popen, os.execute), modules, the environment, loadfile.
local function kind(v)
  return v == nil and "undefined" or type(v)
end
return { kind(io.popen), kind(require), kind(package), kind(os.execute), kind(os.getenv), kind(loadfile) }
