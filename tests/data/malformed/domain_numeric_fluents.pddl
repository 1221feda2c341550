; A :functions section (numeric fluents).
(define (domain fuel)
  (:predicates (at ?x))
  (:functions (fuel-level))
  (:action go
    :parameters (?x)
    :precondition (at ?x)
    :effect (at ?x)))
