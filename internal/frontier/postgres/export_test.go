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
