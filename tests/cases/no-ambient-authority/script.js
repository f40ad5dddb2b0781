return [typeof process, typeof require, typeof std, typeof os, typeof XMLHttpRequest, typeof WebSocket];
