package doctor

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolport/toolport/internal/textclip"
)

// maxRESPLine bounds one reply line read from Redis: PING and AUTH answer
// in a few bytes, and an error line is short.
const maxRESPLine = 512

// pingRedis connects to the server a redis:// or rediss:// URL names,
// authenticates when the URL carries credentials, selects the database, and
// sends PING: one round trip of the protocol, without a client library.
func pingRedis(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New(RedisURLEnv + " is not a valid URL")
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return "", fmt.Errorf("%s: scheme must be redis or rediss, got %q", RedisURLEnv, u.Scheme)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "6379")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Now().Add(DefaultTimeout))
	}
	if u.Scheme == "rediss" {
		tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			return "", fmt.Errorf("TLS: %w", err)
		}
		conn = tc
	}
	r := bufio.NewReaderSize(conn, maxRESPLine)
	cmd := func(args ...string) (string, error) {
		if _, err := conn.Write(encodeRESP(args...)); err != nil {
			return "", err
		}
		return readRESPLine(r)
	}
	if u.User != nil {
		pass, hasPass := u.User.Password()
		args := []string{"AUTH", pass}
		if !hasPass { // redis://password@host, as some clients accept
			args = []string{"AUTH", u.User.Username()}
		} else if name := u.User.Username(); name != "" {
			args = []string{"AUTH", name, pass}
		}
		if _, err := cmd(args...); err != nil {
			return "", fmt.Errorf("AUTH: %w", err)
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
		if _, err := strconv.Atoi(db); err != nil {
			return "", fmt.Errorf("%s: database %q is not a number", RedisURLEnv, db)
		}
		if _, err := cmd("SELECT", db); err != nil {
			return "", fmt.Errorf("SELECT: %w", err)
		}
	}
	reply, err := cmd("PING")
	if err != nil {
		return "", fmt.Errorf("PING: %w", err)
	}
	if reply != "PONG" {
		return "", fmt.Errorf("PING answered %q, want PONG", reply)
	}
	return "PING answered PONG", nil
}

// encodeRESP encodes a command as a RESP array of bulk strings.
func encodeRESP(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, "$"+strconv.Itoa(len(a))+"\r\n"+a+"\r\n"...)
	}
	return b
}

// errRedis is a Redis error reply.
type errRedis struct{ msg string }

func (e *errRedis) Error() string { return "redis: " + e.msg }

// readRESPLine reads one simple-string or error reply ("+PONG", "-NOAUTH …")
// and returns the simple string, or the error reply as an error. Other
// reply kinds, lines longer than maxRESPLine and lines without CRLF are
// errors: the commands sent here answer with simple strings only.
func readRESPLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", errors.New("reply line too long")
	}
	if err != nil {
		return "", err
	}
	return parseRESPLine(line)
}

// parseRESPLine decodes one reply line, CRLF included.
func parseRESPLine(line []byte) (string, error) {
	if len(line) < 3 || line[len(line)-2] != '\r' || line[len(line)-1] != '\n' {
		return "", errors.New("malformed reply (not a RESP line)")
	}
	body := string(line[1 : len(line)-2])
	if strings.ContainsAny(body, "\r\n") {
		return "", errors.New("malformed reply (stray line break)")
	}
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return "", &errRedis{msg: printableASCII(textclip.Prefix(body, 200))}
	}
	return "", fmt.Errorf("unexpected reply type %q", line[0])
}

// printableASCII replaces every byte of a server message that is not
// printable ASCII, so that it cannot forge a line in a terminal or a log.
func printableASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		b.WriteByte(c)
	}
	return b.String()
}
