// Package hostload decides when each host may be fetched: at most one request
// in flight per host, a minimum gap between requests, and hosts that must
// wait parked in a time-ordered heap so that no worker sleeps while another
// host is due. Later work adds the adaptive rate (response times, 429/5xx,
// Retry-After) on the same structure.
package hostload
