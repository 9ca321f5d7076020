package postgres

// StopRenewingForTest stops the store's renewals, as if its process had
// stopped: its leases then end LeaseTTL after their last renewal.
func (s *Store) StopRenewingForTest() {
	s.mu.Lock()
	s.mu.renewOff = true
	s.mu.Unlock()
}
