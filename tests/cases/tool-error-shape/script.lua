local ok, e = pcall(tools.call, "fail", { message = "nope" })
return { isError = ForgeError.is(e), code = e.code, message = e.message }
