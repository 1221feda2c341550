; Derived predicates (axioms) are not supported.
(define (domain bw)
  (:requirements :strips)
  (:predicates (on ?x ?y) (above ?x ?y))
  (:derived (above ?x ?y) (on ?x ?y))
  (:action noop
    :parameters (?x)
    :precondition (on ?x ?x)
    :effect (above ?x ?x)))
