package machine

// done reports whether c is closed (a nil channel never is).
func done(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
