package rollback

// SetLookedAt sets the function dirAt calls each time it looks at a
// parent directory on disk (nil: none), for the tests that count the
// rollback's own lstats.
func SetLookedAt(f func(rel string)) { lookedAt = f }

// SetMovingAway sets the function moveAway calls as it begins with a path
// (nil: none), for the tests that change the tree between a pass's checks
// and a move.
func SetMovingAway(f func(rel string)) { movingAway = f }
