// Work in progress: the libcurl HTTPClient (issue 4).
import CCurl
