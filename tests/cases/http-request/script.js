// fetch is there, as on every platform scripts are written for, and never reaches the network;
// nothing else could open a connection.
const fetched = await fetch("http://127.0.0.1:9/").then(
  () => "reachable",
  (e) => (e instanceof TypeError ? "refused" : "reachable"),
);
return fetched === "refused" && [typeof XMLHttpRequest, typeof WebSocket].every((t) => t === "undefined")
  ? "refused"
  : "reachable";
