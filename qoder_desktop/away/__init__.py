"""Away mode: a paired phone as a second screen of this desk (see docs/AWAY-PROTOCOL.md).

Qt-free: the desk's certificate authority, the paired devices, pairing, signed answers,
the phone's view of a request, the HTTPS + WebSocket server and Away mode's state. The
phone page itself is package data in `page/`.
"""
