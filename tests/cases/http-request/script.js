return [typeof fetch, typeof XMLHttpRequest, typeof WebSocket].every((t) => t === "undefined")
  ? "refused"
  : "reachable";
