//! A minimal HTTP/1.1 client: `GET` over one keep-alive `TcpStream` (Nagle off), a body framed
//! by `Content-Length` or chunked, and a reconnection when a reused connection turns out to be
//! closed. Enough for a load generator that must not spend the cores it shares with the server
//! on a client library; not a general client.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One keep-alive connection to a server, opened on first use and again after an error.
pub struct HttpClient {
    addr: SocketAddr,
    timeout: Duration,
    connection: Option<BufReader<TcpStream>>,
    request: Vec<u8>,
    line: String,
}

impl HttpClient {
    /// A client of the server at `addr`; every read and write gives up after `timeout`.
    pub fn new(addr: SocketAddr, timeout: Duration) -> HttpClient {
        HttpClient {
            addr,
            timeout,
            connection: None,
            request: Vec::with_capacity(512),
            line: String::with_capacity(128),
        }
    }

    fn connect(&self) -> io::Result<BufReader<TcpStream>> {
        let stream = TcpStream::connect_timeout(&self.addr, self.timeout)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(self.timeout))?;
        Ok(BufReader::with_capacity(64 << 10, stream))
    }

    /// `GET target` (a path with its query string); the body replaces `body`'s contents and the
    /// status is returned. A connection that was idle and closed by the server is opened again
    /// once; any other error drops the connection and is returned.
    pub fn get(&mut self, target: &str, body: &mut Vec<u8>) -> io::Result<u16> {
        self.request.clear();
        write!(
            self.request,
            "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: */*\r\n\r\n",
            self.addr
        )?;
        let reused = self.connection.is_some();
        match self.exchange(body) {
            Ok(status) => Ok(status),
            Err(e) if reused && closed_before_answer(&e) => {
                self.connection = None;
                self.exchange(body)
            }
            Err(e) => Err(e),
        }
    }

    fn exchange(&mut self, body: &mut Vec<u8>) -> io::Result<u16> {
        if self.connection.is_none() {
            self.connection = Some(self.connect()?);
        }
        let connection = self.connection.as_mut().expect("connected above");
        let result = (|| {
            connection.get_mut().write_all(&self.request)?;
            read_response(connection, &mut self.line, body)
        })();
        match result {
            Ok((status, keep_alive)) => {
                if !keep_alive {
                    self.connection = None;
                }
                Ok(status)
            }
            Err(e) => {
                self.connection = None;
                Err(e)
            }
        }
    }
}

/// Whether `e` says the server had closed the connection before answering (an idle
/// keep-alive connection it let go), so that the request may be sent again.
fn closed_before_answer(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
    )
}

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// Reads one line; end of stream before it is an `UnexpectedEof`.
fn read_line(reader: &mut impl BufRead, line: &mut String) -> io::Result<()> {
    line.clear();
    if reader.read_line(line)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection",
        ));
    }
    Ok(())
}

/// Reads a response: its status, whether the connection stays open, and its body into `body`.
fn read_response(
    reader: &mut impl BufRead,
    line: &mut String,
    body: &mut Vec<u8>,
) -> io::Result<(u16, bool)> {
    read_line(reader, line)?;
    let mut parts = line.split_ascii_whitespace();
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(invalid(format!("not an HTTP/1.x status line: {line:?}")));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid(format!("no status in {line:?}")))?;
    let mut keep_alive = version != "HTTP/1.0";
    let mut length = None;
    let mut chunked = false;
    loop {
        read_line(reader, line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            return Err(invalid(format!("malformed header {header:?}")));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .parse::<usize>()
                    .map_err(|_| invalid(format!("bad Content-Length {value:?}")))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            keep_alive = !value.eq_ignore_ascii_case("close");
        }
    }
    body.clear();
    if chunked {
        loop {
            read_line(reader, line)?;
            let size = line.trim_end().split(';').next().unwrap_or("");
            let size = usize::from_str_radix(size.trim(), 16)
                .map_err(|_| invalid(format!("bad chunk size {line:?}")))?;
            if size == 0 {
                // Trailers, then the empty line.
                loop {
                    read_line(reader, line)?;
                    if line.trim_end().is_empty() {
                        break;
                    }
                }
                break;
            }
            let start = body.len();
            body.resize(start + size, 0);
            reader.read_exact(&mut body[start..])?;
            read_line(reader, line)?;
        }
    } else if let Some(length) = length {
        body.resize(length, 0);
        reader.read_exact(body)?;
    } else if !(status < 200 || status == 204 || status == 304) {
        // No framing: the body runs to the end of the connection.
        reader.read_to_end(body)?;
        keep_alive = false;
    }
    Ok((status, keep_alive))
}

/// `text` as a URL query component: unreserved characters kept, every other byte `%XX`.
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3 / 2);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The value of the sample `name{label="value"}` in Prometheus or OpenMetrics text (the first
/// sample of `name` when `label` is `None`).
pub fn metric_value(text: &str, name: &str, label: Option<(&str, &str)>) -> Option<f64> {
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let (labels, value) = if let Some(inner) = rest.strip_prefix('{') {
            let (labels, value) = inner.split_once('}')?;
            (labels, value)
        } else if rest.starts_with(' ') {
            ("", rest)
        } else {
            continue; // a longer name with this prefix
        };
        if let Some((key, wanted)) = label {
            let found = labels.split(',').any(|pair| {
                pair.split_once('=')
                    .is_some_and(|(k, v)| k.trim() == key && v.trim().trim_matches('"') == wanted)
            });
            if !found {
                continue;
            }
        }
        return value.split_ascii_whitespace().next()?.parse().ok();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> (u16, bool, String) {
        let mut reader = BufReader::new(raw.as_bytes());
        let (mut line, mut body) = (String::new(), Vec::new());
        let (status, keep) = read_response(&mut reader, &mut line, &mut body).unwrap();
        (status, keep, String::from_utf8(body).unwrap())
    }

    #[test]
    fn reads_length_and_chunked_bodies() {
        let (status, keep, body) =
            parse("HTTP/1.1 200 OK\r\ncontent-length: 5\r\nx: y\r\n\r\nhelloNEXT");
        assert_eq!((status, keep, body.as_str()), (200, true, "hello"));
        let (status, keep, body) = parse(
            "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n",
        );
        assert_eq!((status, keep, body.as_str()), (503, false, "abcde"));
        let (status, keep, body) = parse("HTTP/1.0 204 No Content\r\n\r\n");
        assert_eq!((status, keep, body.as_str()), (204, false, ""));
        let mut reader =
            BufReader::new("HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nab".as_bytes());
        let (mut line, mut body) = (String::new(), Vec::new());
        assert!(read_response(&mut reader, &mut line, &mut body).is_err());
    }

    #[test]
    fn encodes_queries_and_reads_metrics() {
        assert_eq!(
            encode_component("+a -b\"c\"/é"),
            "%2Ba%20-b%22c%22%2F%C3%A9"
        );
        let text = "# HELP x\napcache_dram_bytes_x 1\napcache_dram_bytes{kind=\"cgroup_peak\"} 1234\napcache_dram_bytes{kind=\"process_rss_anon\"} 99\napcache_rejected_total{index=\"bench\"} 7\n# EOF\n";
        let get = |name, label| metric_value(text, name, label);
        assert_eq!(
            get("apcache_dram_bytes", Some(("kind", "cgroup_peak"))),
            Some(1234.0)
        );
        assert_eq!(
            get("apcache_dram_bytes", Some(("kind", "process_rss_anon"))),
            Some(99.0)
        );
        assert_eq!(get("apcache_dram_bytes", Some(("kind", "nope"))), None);
        assert_eq!(get("apcache_rejected_total", None), Some(7.0));
        assert_eq!(get("apcache_dram_bytes_x", None), Some(1.0));
    }
}
