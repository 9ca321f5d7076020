package gentlecrawl

// Version is the release of gentlecrawl, sent in the User-Agent header.
const Version = "0.1.0"

// InfoURL is the page a site owner reaches from the User-Agent's "+URL" comment.
const InfoURL = "https://github.com/gentlecrawl/gentlecrawl"
