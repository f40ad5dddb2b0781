-- tools.wait is wait-any: with nothing begun it returns nil at once.
return tools.wait() == nil
