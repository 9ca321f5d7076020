package postgres

// StopRenewingForTest stops the store's renewals, as if its process had
// stopped: its leases then end LeaseTTL after their last renewal.
func (s *Store) StopRenewingForTest() {
	s.mu.Lock()
	s.mu.renewOff = true
	s.mu.Unlock()
}

// SchemaV1ForTest is the first version of the schema, as a database
// created by an earlier build holds it.
const SchemaV1ForTest = schemaV1

// SetHistoryPageForTest sets how many histories EachHistory reads with one
// statement, until the test ends.
func SetHistoryPageForTest(t interface{ Cleanup(func()) }, n int) {
	old := historyPage
	historyPage = n
	t.Cleanup(func() { historyPage = old })
}

// AcquiredConnsForTest is how many of the store's connections are in use.
func (s *Store) AcquiredConnsForTest() int32 { return s.pool.Stat().AcquiredConns() }
