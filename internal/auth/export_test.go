package auth

// Forming is how many lookups the batch waiting for its connection holds
// (0: none waits).
func (s *Service) Forming() int {
	s.lookups.mu.Lock()
	defer s.lookups.mu.Unlock()
	if s.lookups.forming == nil {
		return 0
	}
	return len(s.lookups.forming.items)
}
