-- No io, no require, no sockets: nothing that could open a connection.
local reachable = io ~= nil or require ~= nil or package ~= nil or socket ~= nil or http ~= nil
return reachable and "reachable" or "refused"
