'use strict';

// RFC 3986 unreserved characters stay as they are; everything else is percent-encoded.
// encodeURIComponent leaves !'()* alone, which RFC 3986 reserves.
function encode(value) {
  return encodeURIComponent(String(value)).replace(/[!'()*]/g,
    (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

// '+' is a space in application/x-www-form-urlencoded; a bad escape is kept as it is.
function decode(text) {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch (err) {
    return spaced.replace(/%[0-9a-fA-F]{2}/g, (m) => {
      try { return decodeURIComponent(m); } catch (e) { return m; }
    });
  }
}

module.exports = { encode, decode };
