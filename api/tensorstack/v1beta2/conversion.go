package v1beta2

// Hub marks v1beta2 as the version every other StorageShim version converts through.
func (*StorageShim) Hub() {}
