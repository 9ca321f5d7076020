package httpsig

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
)

// Message is the request a signature base is built from: as the client
// sends it, or as the server received it.
type Message struct {
	Method string // "GET"
	Scheme string // "http" or "https"
	// Authority is the target's host and port, as in the Host header;
	// @authority normalizes it (lower case, no default port).
	Authority string
	// Target is the request target in origin form: "/path?query".
	Target string
	// Header holds the header fields; Host need not be among them.
	Header http.Header
}

// ErrUnsupported is wrapped by the errors of components and parameters
// this package does not build a base for.
var ErrUnsupported = errors.New("not supported")

// ComponentError says which covered component could not be put in the
// signature base, and why.
type ComponentError struct {
	Component string // its identifier, serialized: "signature-agent";key="sig1"
	Err       error
}

func (e *ComponentError) Error() string {
	return fmt.Sprintf("component %s: %v", e.Component, e.Err)
}

func (e *ComponentError) Unwrap() error { return e.Err }

// Base returns the signature base of m (RFC 9421 §2.5) for the covered
// components and signature parameters in params: its items are the
// component identifiers (strings with parameters), its parameters those of
// @signature-params, in their order.
//
// Supported components: @method, @target-uri, @authority, @scheme,
// @request-target, @path, @query, and header fields, whole or, with the
// key parameter, one member of a Dictionary field. Other derived
// components (@query-param, @status) and the sf, bs, req, tr and name
// parameters are ErrUnsupported; a component covered twice, a field name
// not in lower case, and a field the message lacks are errors.
func Base(m *Message, params InnerList) (string, error) {
	var b strings.Builder
	seen := make(map[string]bool, len(params.Items))
	for _, it := range params.Items {
		id, err := SerializeItem(it)
		if err != nil {
			return "", err
		}
		name, ok := it.Value.(string)
		if !ok {
			return "", &ComponentError{id, errors.New("a component identifier is a string")}
		}
		if seen[id] {
			return "", &ComponentError{id, errors.New("covered twice")}
		}
		seen[id] = true
		v, err := componentValue(m, name, it.Params)
		if err != nil {
			return "", &ComponentError{id, err}
		}
		if strings.ContainsAny(v, "\r\n") {
			return "", &ComponentError{id, errors.New("value spans lines")}
		}
		b.WriteString(id)
		b.WriteString(": ")
		b.WriteString(v)
		b.WriteByte('\n')
	}
	sp, err := SerializeInnerList(params)
	if err != nil {
		return "", err
	}
	b.WriteString(`"@signature-params": `)
	b.WriteString(sp)
	return b.String(), nil
}

func componentValue(m *Message, name string, ps Params) (string, error) {
	if strings.HasPrefix(name, "@") {
		if len(ps) > 0 {
			return "", fmt.Errorf("parameter %q on a derived component: %w", ps[0].Key, ErrUnsupported)
		}
		return derived(m, name)
	}
	if name == "" || name != strings.ToLower(name) {
		return "", errors.New("a field name must be in lower case")
	}
	var key string
	for _, p := range ps {
		if p.Key != "key" {
			return "", fmt.Errorf("parameter %q: %w", p.Key, ErrUnsupported)
		}
		k, ok := p.Value.(string)
		if !ok {
			return "", errors.New("the key parameter is a string")
		}
		key = k
	}
	v, ok := FieldValue(m.Header, name)
	if !ok {
		return "", errors.New("the message has no such field")
	}
	if key == "" {
		return v, nil
	}
	d, err := ParseDictionary(v, DefaultLimits)
	if err != nil {
		return "", fmt.Errorf("not a dictionary: %w", err)
	}
	mem, ok := d.Get(key)
	if !ok {
		return "", fmt.Errorf("the dictionary has no member %q", key)
	}
	return SerializeMember(mem)
}

// FieldValue returns the value of the field name as RFC 9421 §2.1 covers
// it: the values of its field lines, each trimmed, joined with ", ".
func FieldValue(h http.Header, name string) (string, bool) {
	vs := h[textproto.CanonicalMIMEHeaderKey(name)]
	if len(vs) == 0 {
		return "", false
	}
	if len(vs) == 1 {
		return strings.Trim(vs[0], " \t"), true
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strings.Trim(v, " \t")
	}
	return strings.Join(parts, ", "), true
}

func derived(m *Message, name string) (string, error) {
	path, query, hasQuery := strings.Cut(m.Target, "?")
	switch name {
	case "@method":
		if m.Method == "" {
			return "", errors.New("no method")
		}
		return m.Method, nil
	case "@authority":
		a := Authority(m.Scheme, m.Authority)
		if a == "" {
			return "", errors.New("no authority")
		}
		return a, nil
	case "@scheme":
		if m.Scheme == "" {
			return "", errors.New("no scheme")
		}
		return strings.ToLower(m.Scheme), nil
	case "@target-uri":
		a := Authority(m.Scheme, m.Authority)
		if a == "" || m.Scheme == "" {
			return "", errors.New("no authority or scheme")
		}
		return strings.ToLower(m.Scheme) + "://" + a + m.Target, nil
	case "@request-target":
		return m.Target, nil
	case "@path":
		if path == "" {
			path = "/"
		}
		return path, nil
	case "@query":
		if !hasQuery {
			query = ""
		}
		return "?" + query, nil
	case "@query-param", "@status":
		return "", ErrUnsupported
	}
	return "", fmt.Errorf("unknown derived component: %w", ErrUnsupported)
}

// Authority normalizes a Host header value as @authority covers it (RFC
// 9421 §2.2.3, RFC 9110 §4.2.3): lower case, without the scheme's default
// port.
func Authority(scheme, host string) string {
	host = strings.ToLower(host)
	switch strings.ToLower(scheme) {
	case "http":
		host = strings.TrimSuffix(host, ":80")
	case "https":
		host = strings.TrimSuffix(host, ":443")
	}
	return host
}
