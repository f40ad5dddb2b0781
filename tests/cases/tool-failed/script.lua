tools.call("fail", { message = "it broke" })
