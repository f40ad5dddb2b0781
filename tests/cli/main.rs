//! End-to-end tests: the real `forge-host` binary running real engine components.
//! The engines must be built first (`cargo xtask test` does it).

mod approval;
mod boundary;
mod bytecode;
mod certs;
mod cluster;
mod cluster_security;
mod compression;
mod conformance;
mod crash;
mod disk;
mod engines;
mod etcd_security;
mod habits;
mod journal;
mod mcp_approval;
mod mcp_files;
mod mcp_security;
mod mcp_server;
mod mcp_tools;
mod no_leaks;
mod packages;
mod peers;
mod pip_index;
mod python;
mod replay;
mod run;
mod science;
mod state_backends;
mod typed_tools;
mod upstream;
mod util;
mod workers;
mod workspace;
