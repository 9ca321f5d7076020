// Package frontier keeps the durable state of a crawl: the per-host queues of
// URLs waiting to be fetched, the seen-set that makes sure no URL is queued
// twice, the fetch history (status, validators, digest) that conditional GETs
// and revisits are built from, and the robots.txt cache.
//
// The embedded implementation stores everything in a Pebble database in the
// job directory. Every visit is one atomic batch: the URL leaves its queue,
// its history is written and the links it led to are admitted, so a crash
// leaves each URL either pending or done, never lost.
package frontier
