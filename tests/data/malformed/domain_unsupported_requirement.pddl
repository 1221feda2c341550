; :adl is outside the STRIPS + typing fragment.
(define (domain bw)
  (:requirements :strips
                 :adl)
  (:predicates (clear ?x))
  (:action noop
    :parameters (?x)
    :precondition (clear ?x)
    :effect (clear ?x)))
