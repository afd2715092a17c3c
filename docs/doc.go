// Package docs holds accelstack's manual as markdown pages, linked from the
// README. It has no Go code of its own: its tests check that every relative
// link in README.md and the pages points at a file and heading that exist,
// and that the manual's catalogues list what the tree holds (the end-to-end
// tests, the binaries of cmd/, the directories of the layout).
package docs
