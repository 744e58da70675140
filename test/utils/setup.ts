// Loaded by mocha before any test: mDNS is multicast, so every host started by
// this test process (or by a CLI call it makes) runs with mDNS off. Tests of LAN
// discovery run inside namespace LANs, whose processes get an environment
// without AMESH_MDNS (see test/utils/netns.ts lanEnv()).
process.env.AMESH_MDNS = 'off'

export {}
