-- No sockets, no require, no io.popen (to run curl): nothing that could open a connection.
local reachable = io.popen ~= nil or require ~= nil or package ~= nil or socket ~= nil or http ~= nil
return reachable and "reachable" or "refused"
