import forge
try:
    forge.call("fail", {"message": "nope"})
except forge.ToolError as e:
    forge.result({"isError": isinstance(e, Exception), "code": e.code, "message": e.message})
