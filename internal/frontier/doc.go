// Package frontier keeps the durable state of a crawl: the per-host queues of
// URLs waiting to be fetched, the seen-set that makes sure no URL is queued
// twice, each host's next allowed time, the fetch history (status,
// validators, digest, changes) that conditional GETs and revisits are built
// from, and the robots.txt cache.
//
// [Frontier] is the interface every backend implements; package frontiertest
// is the conformance suite they all pass. [Store] is the embedded backend, a
// Pebble database in the job directory. Its seen-set is exact (a 128-bit hash
// of the canonical URL per key) behind an in-memory Bloom filter, so that
// most new URLs are admitted without a read. The filter starts sized for
// [Options.ExpectedURLs] and grows by layers as URLs are seen (10 to 20 bits
// a URL), so its memory grows with the crawl. The host heap and the queue
// counts live in memory, so that a claim never scans all hosts; leases live
// in memory only. Close saves that state and the filter to a file that Open
// restores when it is current and whole, and rebuilds by a scan of the
// store otherwise (after a crash). Hosts idle beyond [Options.IdleHosts]
// are evicted from memory and read again from their records.
//
// Every change is one batch through one path. Add and Release return once
// their batch is applied and its fsync under way, without waiting for the
// disk: a goroutine of the store awaits the fsyncs, which the changes of a
// moment share, and one that fails fails the store ([Frontier] says what a
// crash may lose). A store in tmpfs makes no fsyncs at all ([Volatile]).
package frontier
