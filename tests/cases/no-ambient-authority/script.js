return [typeof fetch, typeof require, typeof std, typeof os, typeof XMLHttpRequest, typeof WebSocket];
