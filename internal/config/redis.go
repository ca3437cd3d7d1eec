package config

import "net/url"

// RedisURL returns TOOLPORT_REDIS_URL (or "redis.url" in the credentials
// file): the Redis that replicas share for the result cache and the upstream
// rate limiters, e.g. redis://:password@10.0.0.5:6379/0; "" means the
// embedded, in-process defaults. The URL and its password are secrets: they
// are listed by [Config.Secrets], so nothing Toolport emits shows them; log
// the URL only through [RedactURL].
func (c *Config) RedisURL() string {
	v := c.Secret("TOOLPORT_REDIS_URL", "redis.url")
	if u, err := url.Parse(v); err == nil && u.User != nil {
		// redis://:password@host, redis://user:password@host, and
		// redis://password@host, which some clients (and doctor) accept.
		pw, ok := u.User.Password()
		if !ok {
			pw = u.User.Username()
		}
		c.AddSecret(pw)
	}
	return v
}

// RedactURL returns raw with any password replaced by "xxxxx", for logs and
// error messages. A URL that does not parse is replaced whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	return u.String()
}
