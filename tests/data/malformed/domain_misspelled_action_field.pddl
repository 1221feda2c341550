; ':precondtion' is misspelled.
(define (domain bw)
  (:predicates (clear ?x))
  (:action noop
    :parameters (?x)
    :precondtion (clear ?x)
    :effect (clear ?x)))
