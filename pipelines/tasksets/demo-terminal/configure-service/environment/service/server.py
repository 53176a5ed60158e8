import configparser
from http.server import BaseHTTPRequestHandler, HTTPServer

config = configparser.ConfigParser()
config.read("/app/service/service.ini")
section = config["server"]


class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        body = f"ok from {section['name']}".encode() if self.path == "/health" else b"no"
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        self.wfile.write(body)


HTTPServer((section["host"], int(section["port"])), Health).serve_forever()
