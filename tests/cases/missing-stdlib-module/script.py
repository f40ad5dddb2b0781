import ssl
