//! What a target may do on the wire, and what the harness makes of it.

mod capped;
mod evidence;
mod hostile;
mod ordinary;
mod readings;
mod tls;
mod transport;
