// Package frontier keeps the durable state of a crawl: the per-host queues of
// URLs waiting to be fetched, the seen-set that makes sure no URL is queued
// twice, each host's next allowed time, the fetch history (status,
// validators, digest, changes) that conditional GETs and revisits are built
// from, and the robots.txt cache.
//
// [Frontier] is the interface every backend implements; package frontiertest
// is the conformance suite they all pass. [Store] is the embedded backend, a
// Pebble database in the job directory. Its seen-set is exact (a 128-bit hash
// of the canonical URL per key) behind an in-memory Bloom filter of fixed
// size, and its host heap, queue counts and leases live in memory, rebuilt
// when it is opened, so that a claim never scans all hosts and memory does not
// grow with the URLs seen. Every change is one batch through one path; a
// release is durable (fsynced) before it returns, and concurrent releases
// share their fsyncs.
package frontier
