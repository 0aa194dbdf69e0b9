package queue

// What only the tests ask of the queue.

