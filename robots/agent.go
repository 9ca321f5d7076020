package robots

import (
	"errors"
	"fmt"
)

// ErrInvalidAgent is the cause of the error ValidateAgent returns.
var ErrInvalidAgent = errors.New("robots: invalid product token")

// ValidAgent reports whether token is a valid product token for a crawler
// to obey: one or more of A-Z, a-z, "_" and "-" (RFC 9309 §2.2.1).
func ValidAgent(token string) bool {
	if token == "" {
		return false
	}
	for i := 0; i < len(token); i++ {
		if !isAgentByte(token[i]) {
			return false
		}
	}
	return true
}

// ValidateAgent returns nil when token is a valid product token (see
// ValidAgent), else an error that wraps ErrInvalidAgent and says what is
// wrong, for a crawler to refuse a bad token of its own before it starts:
// robots.txt groups could never name it.
func ValidateAgent(token string) error {
	if token == "" {
		return fmt.Errorf("%w: empty", ErrInvalidAgent)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; !isAgentByte(c) {
			if i > 0 && (c == '/' || c == ' ') {
				return fmt.Errorf("%w %q: it is the name before any \"/\" or version, %q, made only of letters, \"-\" and \"_\" (RFC 9309 §2.2.1)", ErrInvalidAgent, token, token[:i])
			}
			return fmt.Errorf("%w %q: character %q at %d; a product token has only letters, \"-\" and \"_\" (RFC 9309 §2.2.1)", ErrInvalidAgent, token, c, i)
		}
	}
	return nil
}

func isAgentByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}
