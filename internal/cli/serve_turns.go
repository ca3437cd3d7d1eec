package cli

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// maxTurnSetting bounds the turn durations a replica accepts.
const maxTurnSetting = 24 * time.Hour

// serveTurns holds the settings of chat turns shared between replicas.
type serveTurns struct {
	lease, retention time.Duration
	replica          string
	// startPrecedence is server.Config.StartPrecedence: 0 the default,
	// negative off.
	startPrecedence time.Duration
}

// maxStartPrecedence bounds how long a running turn may be held per event
// while others start.
const maxStartPrecedence = 10 * time.Second

// turnSettings reads TOOLPORT_TURN_LEASE, TOOLPORT_TURN_EVENTS_RETENTION,
// TOOLPORT_TURN_START_PRECEDENCE and TOOLPORT_REPLICA_ID; unset values keep
// the server's defaults.
func turnSettings(getenv func(string) string) (serveTurns, error) {
	var st serveTurns
	var err error
	if st.lease, err = turnDuration("TOOLPORT_TURN_LEASE", getenv("TOOLPORT_TURN_LEASE"), time.Second); err != nil {
		return st, err
	}
	if st.retention, err = turnDuration("TOOLPORT_TURN_EVENTS_RETENTION", getenv("TOOLPORT_TURN_EVENTS_RETENTION"), time.Second); err != nil {
		return st, err
	}
	switch v := strings.TrimSpace(getenv("TOOLPORT_TURN_START_PRECEDENCE")); v {
	case "":
	case "0", "off":
		st.startPrecedence = -1
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > maxStartPrecedence {
			return st, fmt.Errorf("TOOLPORT_TURN_START_PRECEDENCE=%q: want a duration up to %s, such as 200ms, or off", v, maxStartPrecedence)
		}
		st.startPrecedence = d
	}
	st.replica = strings.TrimSpace(getenv("TOOLPORT_REPLICA_ID"))
	if len(st.replica) > 64 || strings.IndexFunc(st.replica, func(r rune) bool { return !unicode.IsPrint(r) || r == ' ' }) >= 0 {
		return st, fmt.Errorf("TOOLPORT_REPLICA_ID: want at most 64 printable characters without spaces")
	}
	return st, nil
}

func turnDuration(name, value string, least time.Duration) (time.Duration, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(value)
	if err != nil || d < least || d > maxTurnSetting {
		return 0, fmt.Errorf("%s=%q: want a duration from %s to %s, such as 15s", name, value, least, maxTurnSetting)
	}
	return d, nil
}
