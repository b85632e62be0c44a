// The models and seeded generators the benchmarks share with the tests live in a module of their
// own (`Sources/RillWorkloads`), so that `rill-bench` needs no test code; every test that imports
// the test support sees them as before.
@_exported import RillWorkloads
