class Failure(Exception):
    code = "TOOL_FAILED"


raise Failure("mine")
