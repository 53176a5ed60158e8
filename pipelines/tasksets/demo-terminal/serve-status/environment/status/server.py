import configparser
from http.server import BaseHTTPRequestHandler, HTTPServer

config = configparser.ConfigParser()
config.read("/app/status/status.ini")
section = config["server"]


class Status(BaseHTTPRequestHandler):
    def do_GET(self):
        found = self.path == "/status"
        self.send_response(200 if found else 404)
        self.end_headers()
        self.wfile.write(f"{section['name']}: up".encode() if found else b"no such page")


HTTPServer((section["host"], int(section["port"])), Status).serve_forever()
