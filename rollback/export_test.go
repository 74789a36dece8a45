package rollback

// SetLookedAt sets the function dirAt calls each time it looks at a
// parent directory on disk (nil: none), for the tests that count the
// rollback's own lstats.
func SetLookedAt(f func(rel string)) { lookedAt = f }
